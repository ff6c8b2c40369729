#!/usr/bin/env node
import '../src/cli/gateway.ts';
