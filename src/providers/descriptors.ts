/** The providers' descriptors, from the one list of providers (index.ts). */
import { PROVIDERS } from './index.ts';
import type { Provider } from './types.ts';

type DescriptorsOf<P extends readonly Provider[]> = { -readonly [K in keyof P]: P[K]['descriptor'] };

// A generic function, not an assertion on `typeof PROVIDERS`: that would make the catalog's model type,
// which the providers' adapters are typed by, depend on itself (tsc then reads the descriptors as unknown).
function descriptorsOf<const P extends readonly Provider[]>(providers: P): DescriptorsOf<P> {
  return providers.map((provider) => provider.descriptor) as DescriptorsOf<P>;
}

/** The descriptors, in the order the catalog documentation lists them. */
export const PROVIDER_DESCRIPTORS = descriptorsOf(PROVIDERS);

/** A provider kind: the catalog's `provider` values. */
export type ProviderName = (typeof PROVIDER_DESCRIPTORS)[number]['name'];

/**
 * The descriptor of a provider kind. A name is a string here because the seam between the worker and the
 * adapters is typed by what every provider's model has (src/providers/model.ts), not by the list of providers,
 * which is made from them; the catalog's loader admits no other name, so one that is not listed is a defect.
 */
export function descriptorOf(name: string): (typeof PROVIDER_DESCRIPTORS)[number] {
  const descriptor = PROVIDER_DESCRIPTORS.find((candidate) => candidate.name === name);
  if (!descriptor) throw new Error(`no provider is named '${name}'`);
  return descriptor;
}

/** Whether a provider speaks Anthropic's Messages API itself (a client of /v1/messages then reaches it untranslated). */
export function speaksMessages(name: string): boolean {
  return descriptorOf(name).capabilities.nativeMessages;
}
