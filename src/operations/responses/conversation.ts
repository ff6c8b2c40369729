/**
 * A Responses request's conversation made whole before it is translated: the items of the earlier
 * responses it continues (`previous_response_id`: each one's input and output, oldest first) come
 * before its own input, and each `item_reference` is replaced by the stored item it names. What a
 * provider gets is then an ordinary stateless request, whichever provider it is.
 */
import { InvalidValueError } from '../../errors/gateway-error.ts';
import type { ResponseStatus, StoredItem } from '../../infra/store/repository.ts';
import type { InputItem, ResponsesRequest } from '../../wire/openai-responses.ts';
import { outputItems } from '../../infra/responses/kept-responses.ts';

/** A kept response as the conversation reads it. */
export interface ConversationTurn {
  status: ResponseStatus;
  body: Record<string, unknown>;
  /** Its own input items; null when they were not kept (`store: false`). */
  input: StoredItem[] | null;
  previousResponseId: string | null;
}

/** Where the earlier turns are read (Redis, then the store: src/infra/responses/kept-responses.ts). */
export interface ConversationStore {
  find(tenantId: string, id: string): Promise<ConversationTurn | null>;
  findItems(tenantId: string, ids: readonly string[]): Promise<Map<string, StoredItem>>;
}

/** The request with its conversation whole, and how many of its input items came from earlier responses. */
export interface WholeConversation {
  request: ResponsesRequest;
  contextItems: number;
}

// A chain longer than this is a loop or a misuse; each turn costs a read.
const MAX_TURNS = 1_000;

const PREVIOUS = 'previous_response_id';

/** The input as a list of items (a string is one user message). */
export function inputItems(input: ResponsesRequest['input']): InputItem[] {
  if (input === undefined) return [];
  return typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
}

function isReference(item: InputItem): boolean {
  return item.type === 'item_reference' || (item.type === undefined && item.role === undefined && item.id != null);
}

/** The items of the responses `id` continues, and its own, oldest first. */
async function earlierItems(store: ConversationStore, tenantId: string, id: string): Promise<InputItem[]> {
  const turns: StoredItem[][] = [];
  let next: string | null = id;
  for (let hops = 0; next !== null; hops++) {
    if (hops === MAX_TURNS) throw new InvalidValueError(PREVIOUS, `The conversation of '${id}' is longer than ${MAX_TURNS} responses.`);
    const turn: ConversationTurn | null = await store.find(tenantId, next);
    if (!turn) {
      const which = next === id ? `The response '${id}'` : `The response '${next}' (an earlier turn of '${id}')`;
      throw new InvalidValueError(PREVIOUS, `${which} was not found: it does not exist, was deleted or is past its retention.`);
    }
    if (turn.status !== 'completed' && turn.status !== 'incomplete')
      throw new InvalidValueError(PREVIOUS, `The response '${next}' is ${turn.status}; only a finished response (completed or incomplete) can be continued.`);
    if (turn.input === null) throw new InvalidValueError(PREVIOUS, `The response '${next}' was not stored (store: false), so it cannot be continued.`);
    turns.unshift([...turn.input, ...outputItems(turn.body)]);
    next = turn.previousResponseId;
  }
  return turns.flat();
}

/** Replaces every item reference with the stored item; an unknown id is refused, naming the item. */
async function resolveReferences(store: ConversationStore, tenantId: string, items: readonly InputItem[]): Promise<InputItem[]> {
  const ids = items.flatMap((item) => (isReference(item) && item.id != null ? [item.id] : []));
  if (ids.length === 0) return [...items];
  const found = await store.findItems(tenantId, ids);
  return items.map((item, i) => {
    if (!isReference(item) || item.id == null) return item;
    const stored = found.get(item.id);
    if (!stored) throw new InvalidValueError(`input[${i}].id`, `No stored item has the id '${item.id}': it does not exist, was deleted or was not stored.`);
    return stored;
  });
}

/**
 * The request with the earlier turns before its input and its references resolved. A tenant that
 * stores no responses can continue none: `previous_response_id` is refused rather than ignored.
 */
export async function wholeConversation(
  request: ResponsesRequest,
  tenantId: string,
  store: ConversationStore,
  storesResponses: boolean,
): Promise<WholeConversation> {
  const previous = request.previous_response_id ?? null;
  const own = inputItems(request.input);
  const hasReference = own.some(isReference);
  if (previous === null && !hasReference) return { request, contextItems: 0 };
  if (previous !== null && !storesResponses)
    throw new InvalidValueError(PREVIOUS, "This tenant's data policy stores no responses, so none can be continued: send the whole conversation in 'input'.");
  const earlier = previous === null ? [] : await earlierItems(store, tenantId, previous);
  const resolved = await resolveReferences(store, tenantId, own);
  return { request: { ...request, input: [...earlier, ...resolved] }, contextItems: earlier.length };
}
