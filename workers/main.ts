import '../src/worker/main.ts';
