// The official openai SDK pointed at the gateway: one completion, then one stream.
// Run: GATEWAY_KEY=<key printed by npm run dev> node examples/openai-sdk.mjs
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.env.GATEWAY_URL ?? 'http://127.0.0.1:8080/v1', apiKey: process.env.GATEWAY_KEY });

const completion = await client.chat.completions.create({
  model: 'svc-flash',
  messages: [{ role: 'user', content: 'Say hello in five words.' }],
});
console.log(completion.model, completion.usage, completion.choices[0].message.content);

const stream = await client.chat.completions.create({
  model: 'svc-standard',
  messages: [{ role: 'user', content: 'Stream me a short answer.' }],
  stream: true,
  stream_options: { include_usage: true },
});
for await (const chunk of stream) {
  if (chunk.usage) console.log('\nusage:', chunk.usage);
  else process.stdout.write(chunk.choices[0]?.delta?.content ?? '');
}
