/** What the model that compacts a conversation is asked to write: a summary the work can go on from. */

/** The system message of the summary call. */
export const COMPACTION_PROMPT = `You compact a conversation between a user and an AI assistant (with the assistant's tool calls and their results, when it used tools) so that the assistant can carry on the work with your summary in place of the conversation. The user's own messages are kept word for word beside your summary; everything else (the assistant's answers and reasoning, its tool calls and their results, earlier summaries) is replaced by what you write.

Write a summary from which the assistant can continue without the conversation:
- the task and its goal, and the user's requirements, preferences and constraints;
- what has been done and decided, and where things stand now (files, code, commands, results), with the names, paths, identifiers and values needed to carry on;
- what was tried and did not work, and why;
- what remains to be done, the next step first, and any open question.

Be concise and factual; leave out pleasantries and whatever no longer matters. Write only the summary, without a preamble, in the language of the conversation.`;

/** What comes after the conversation in the user message. */
export const COMPACTION_REQUEST = 'Write the summary of the conversation above now.';
