/** Chat's (and the providers') names of the parameters a Responses request names otherwise. */
// Only the names that differ. `messages[i]…` has no exact counterpart: instructions come first and
// function_call items join the assistant message before them, so chat's index is not the item's.
export const RESPONSES_PARAMS: Readonly<Record<string, string>> = {
  messages: 'input',
  max_completion_tokens: 'max_output_tokens',
  // Anthropic's name, from its request builder.
  max_tokens: 'max_output_tokens',
  response_format: 'text.format',
  reasoning_effort: 'reasoning.effort',
};
