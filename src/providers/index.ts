/**
 * Every provider kind the gateway speaks: a new provider is a folder and one entry here. The catalog's
 * schema (through descriptors.ts) and the worker's registry (registry.ts) derive from this list.
 */
import { anthropicProvider } from './anthropic/index.ts';
import { geminiProvider } from './gemini/index.ts';
import { openAiCompatibleProvider } from './openai-compatible/index.ts';
import { simulatorProvider } from './simulator/index.ts';

/** The providers, in the order the catalog documentation lists them. */
export const PROVIDERS = [openAiCompatibleProvider, anthropicProvider, geminiProvider, simulatorProvider] as const;
