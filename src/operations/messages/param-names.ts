/** Chat's (and the providers') names of the parameters an Anthropic Messages request names otherwise. */
// Only the names that differ. `messages[i]…` has no exact counterpart: the system prompt comes
// first and tool results become messages of their own, so chat's index is not the turn's.
export const MESSAGES_PARAMS: Readonly<Record<string, string>> = {
  stop: 'stop_sequences',
  user: 'metadata.user_id',
  reasoning_effort: 'thinking',
  response_format: 'output_config.format',
  parallel_tool_calls: 'tool_choice.disable_parallel_tool_use',
};
