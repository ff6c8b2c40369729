/** The route, and chat's names of what a compaction request names otherwise. */

/** The operation's route. */
export const COMPACT_PATH = '/v1/responses/compact';

/** Chat's parameter names → the compaction request's: the summary call's messages are the input written out. */
export const COMPACT_PARAMS: Readonly<Record<string, string>> = {
  messages: 'input',
};
