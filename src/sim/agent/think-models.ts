// The language models `agent.think.provider` may name, as listed by
// GET /v1/agent/settings/think/models (docs/protocols/speech-service.md section 4; the response body is not specified there,
// so this shape, `{models: [{id, name, provider}]}`, is ours).
export interface ThinkModel {
  id: string;
  name: string;
  provider: string;
}

export const THINK_MODELS: readonly ThinkModel[] = Object.freeze([
  { id: 'gpt-4o-mini', name: 'GPT-4o mini', provider: 'open_ai' },
  { id: 'gpt-4.1-mini', name: 'GPT-4.1 mini', provider: 'open_ai' },
  { id: 'claude-3-5-haiku-latest', name: 'Claude 3.5 Haiku', provider: 'anthropic' },
  { id: 'gemini-2.0-flash', name: 'Gemini 2.0 Flash', provider: 'google' },
]);
