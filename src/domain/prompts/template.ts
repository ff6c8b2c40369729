import { InvalidValueError, MissingRequiredFieldError } from '../../errors/gateway-error.ts';
import type { PromptMessageTemplate } from '../../infra/store/repository.ts';

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** The placeholder names of the templates, sorted, each once. */
export function templateVariables(messages: readonly PromptMessageTemplate[]): string[] {
  const names = new Set<string>();
  for (const message of messages) for (const match of message.content.matchAll(PLACEHOLDER)) names.add(match[1] as string);
  return [...names].sort();
}

/**
 * Substitutes every `{{name}}` with its variable. A missing variable is a 400 naming
 * `variables.<name>`, a value that is not a string a 400 too; variables the templates
 * do not use are ignored. Substituted text is not scanned again for placeholders.
 */
export function renderTemplates(messages: readonly PromptMessageTemplate[], variables: Record<string, unknown>): PromptMessageTemplate[] {
  for (const name of templateVariables(messages)) {
    if (!Object.hasOwn(variables, name))
      throw new MissingRequiredFieldError(`variables.${name}`, `The prompt needs the variable '${name}'; send it in 'variables'.`);
    if (typeof variables[name] !== 'string') throw new InvalidValueError(`variables.${name}`, `The variable '${name}' must be a string.`);
  }
  return messages.map((message) => ({
    role: message.role,
    content: message.content.replace(PLACEHOLDER, (_, name: string) => variables[name] as string),
  }));
}
