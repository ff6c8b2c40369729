/** A prompt version as GET /internal/v1/prompts/{name}/versions lists it. */
export interface PromptVersion {
  name: string;
  version: number;
  active?: boolean;
  model: string;
  parameters: Record<string, unknown>;
  messages: Array<{ role: string; content: string }>;
  variables: string[];
  created_at: string;
  created_by: string;
}

/** A version as the text the diff compares: its model, parameters and messages. */
export function versionText(version: PromptVersion): string {
  const lines = [`model: ${version.model}`];
  for (const [name, value] of Object.entries(version.parameters)) lines.push(`${name}: ${JSON.stringify(value)}`);
  for (const message of version.messages) lines.push('', `[${message.role}]`, ...message.content.split('\n'));
  return lines.join('\n');
}
