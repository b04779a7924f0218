// Messages -> the token ids the model sees (its own chat template, then tokenizer.json), and ids -> text.
import { Tokenizer } from '@huggingface/tokenizers';
import { Template } from '@huggingface/jinja';
import { ModelError, type ChatMessage } from '../types';
import type { ModelFiles } from './files';

function tokenString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const content = (value as { content?: unknown } | null)?.content;
  return typeof content === 'string' ? content : undefined;
}

export class PromptEncoder {
  private readonly tokenizer: Tokenizer;
  private readonly template: Template;

  constructor(private readonly files: ModelFiles) {
    try {
      this.tokenizer = new Tokenizer(files.tokenizerJson as never, files.tokenizerConfig as never);
    } catch (err) {
      throw new ModelError('load', `tokenizer.json in ${files.dir} could not be loaded: ${(err as Error).message}`);
    }
    try {
      this.template = new Template(files.chatTemplate);
    } catch (err) {
      throw new ModelError('load', `the chat template of ${files.dir} does not parse: ${(err as Error).message}`);
    }
  }

  /** The chat template applied to `messages`, ending where the assistant's reply begins. */
  render(messages: ChatMessage[]): string {
    const cfg = this.files.tokenizerConfig;
    try {
      return this.template.render({
        messages,
        add_generation_prompt: true,
        bos_token: tokenString(cfg.bos_token) ?? '',
        eos_token: tokenString(cfg.eos_token) ?? '',
      });
    } catch (err) {
      throw new ModelError(
        'bad-spec',
        `the chat template of ${this.files.dir} failed on these messages: ${(err as Error).message}`,
      );
    }
  }

  /** Token ids of plain text; special-token strings in it become their special ids. */
  encodeText(text: string): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: false }).ids;
  }

  encodeMessages(messages: ChatMessage[]): number[] {
    return this.encodeText(this.render(messages));
  }

  /** Text of generated ids, special tokens left out. */
  decode(ids: number[]): string {
    return this.tokenizer.decode(ids, { skip_special_tokens: true });
  }
}
