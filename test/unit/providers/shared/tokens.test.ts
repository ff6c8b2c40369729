import { describe, expect, it } from 'vitest';
import { contentText, countPromptTokens, countTextTokens, promptTokensUpperBound, type CountableMessage } from '../../../../src/providers/shared/tokens.ts';
import { mulberry32 } from '../../../../src/providers/simulator/prng.ts';

// A seeded PRNG, so a failing case can be reproduced.
const prng = mulberry32;

const ASCII = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;:!?\'"()[]{}<>/\\|-_=+*&^%$#@~`\n\t';
const MULTI_BYTE = ['é', 'ß', 'ж', 'Ω', '中', '文', '日本', '한', 'ع', 'ह', '€', '😀', '👩‍💻', '🇫🇷', '\u0301', '𝔘', ' ', 'a'];

function randomString(random: () => number, alphabet: readonly string[], maxLength: number): string {
  const length = Math.floor(random() * maxLength);
  let text = '';
  for (let i = 0; i < length; i++) text += alphabet[Math.floor(random() * alphabet.length)];
  return text;
}

function randomMessages(random: () => number, alphabet: readonly string[], asParts: boolean): CountableMessage[] {
  const roles = ['system', 'user', 'assistant', 'tool'];
  return Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
    const role = roles[Math.floor(random() * roles.length)] as string;
    const text = () => randomString(random, alphabet, 120);
    const content = asParts
      ? [
          { type: 'text', text: text() },
          { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          { type: 'text', text: text() },
        ]
      : text();
    return random() < 0.3 ? { role, content, name: randomString(random, ASCII.split(''), 10) } : { role, content };
  });
}

describe('contentText', () => {
  it('is the string itself', () => {
    expect(contentText('hello there')).toBe('hello there');
  });

  it('joins the text parts of an array and skips the others', () => {
    expect(
      contentText([
        { type: 'text', text: 'Describe ' },
        { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        { type: 'text', text: 'this image.' },
        null,
        { type: 'text', text: 42 },
      ]),
    ).toBe('Describe this image.');
  });

  it('is empty for null, undefined and other shapes', () => {
    expect([null, undefined, 12, { text: 'x' }, []].map(contentText)).toEqual(['', '', '', '', '']);
  });
});

describe('countPromptTokens', () => {
  it('costs 3 for the reply plus 3 and the role per message when there is no content', () => {
    expect(countPromptTokens([])).toBe(3);
    expect(countPromptTokens([{ role: 'user', content: '' }])).toBe(3 + 3 + countTextTokens('user'));
  });

  it('grows with the content', () => {
    const counts = [1, 10, 100, 1000].map((n) => countPromptTokens([{ role: 'user', content: 'the quick brown fox '.repeat(n) }]));
    for (let i = 1; i < counts.length; i++) expect(counts[i]).toBeGreaterThan(counts[i - 1] as number);
    expect(counts[3]).toBeGreaterThan(3_000);
  });

  it('grows with each message and with a name', () => {
    const one: CountableMessage[] = [{ role: 'user', content: 'hello' }];
    const two: CountableMessage[] = [...one, { role: 'assistant', content: 'hello' }];
    expect(countPromptTokens(two)).toBeGreaterThan(countPromptTokens(one));
    expect(countPromptTokens([{ role: 'user', content: 'hello', name: 'alice' }])).toBe(countPromptTokens(one) + countTextTokens('alice') + 1);
  });

  it('counts the text parts of array content like the same string', () => {
    const parts = [
      { type: 'text', text: 'Describe ' },
      { type: 'image_url', image_url: { url: 'u' } },
      { type: 'text', text: 'this image.' },
    ];
    expect(countPromptTokens([{ role: 'user', content: parts }])).toBe(countPromptTokens([{ role: 'user', content: 'Describe this image.' }]));
  });

  it('counts text that looks like a special token as ordinary text', () => {
    expect(countPromptTokens([{ role: 'user', content: 'what does <|endoftext|> mean?' }])).toBeGreaterThan(6);
  });
});

describe('promptTokensUpperBound', () => {
  const cases: Array<[name: string, alphabet: readonly string[], asParts: boolean]> = [
    ['ASCII', ASCII.split(''), false],
    ['multi-byte', MULTI_BYTE, false],
    ['mixed array content', [...ASCII.split(''), ...MULTI_BYTE], true],
  ];

  it.each(cases)('is never below the counted tokens for %s messages', (_name, alphabet, asParts) => {
    const random = prng(0x5eed + alphabet.length);
    for (let i = 0; i < 300; i++) {
      const messages = randomMessages(random, alphabet, asParts);
      const counted = countPromptTokens(messages);
      const bound = promptTokensUpperBound(messages);
      if (bound < counted) throw new Error(`bound ${bound} < counted ${counted} for ${JSON.stringify(messages)}`);
    }
  });

  it('counts UTF-8 bytes, not UTF-16 units', () => {
    expect(promptTokensUpperBound([{ role: 'user', content: '中' }])).toBe(3 + 3 + 4 + 3);
    expect(promptTokensUpperBound([{ role: 'user', content: '😀', name: 'al' }])).toBe(3 + 3 + 4 + 4 + 2 + 1);
  });

  it('is cheap to compute for a large prompt and stays an upper bound', () => {
    const messages = [{ role: 'user', content: 'lorem ipsum dolor sit amet '.repeat(20_000) }];
    expect(promptTokensUpperBound(messages)).toBe(3 + 3 + 4 + 27 * 20_000);
    expect(promptTokensUpperBound(messages)).toBeGreaterThanOrEqual(countPromptTokens(messages));
  });
});
