/** Every provider kind the gateway speaks. A new provider is a folder, one line here and one in registry.ts (its adapter factory). */
import { anthropicDescriptor } from './anthropic/descriptor.ts';
import { geminiDescriptor } from './gemini/descriptor.ts';
import { openAiCompatibleDescriptor } from './openai-compatible/descriptor.ts';
import { simulatorDescriptor } from './simulator/descriptor.ts';

/** The descriptors, in the order the catalog documentation lists them. */
export const PROVIDER_DESCRIPTORS = [openAiCompatibleDescriptor, anthropicDescriptor, geminiDescriptor, simulatorDescriptor] as const;

/** A provider kind: the catalog's `provider` values. */
export type ProviderName = (typeof PROVIDER_DESCRIPTORS)[number]['name'];

/** The descriptor of a provider kind. */
export function descriptorOf(name: ProviderName): (typeof PROVIDER_DESCRIPTORS)[number] {
  return PROVIDER_DESCRIPTORS.find((descriptor) => descriptor.name === name) as (typeof PROVIDER_DESCRIPTORS)[number];
}

/** Whether a provider speaks Anthropic's Messages API itself (a client of /v1/messages then reaches it untranslated). */
export function speaksMessages(name: ProviderName): boolean {
  return descriptorOf(name).capabilities.nativeMessages;
}
