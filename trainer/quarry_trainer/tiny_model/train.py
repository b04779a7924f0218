"""Trains Quarry's tiny text-to-SQL model on the bundled sample database: transformers' Qwen2ForCausalLM, saved in
the Hugging Face layout (config.json, model.safetensors, tokenizer files with the chat template,
generation_config.json) beside model.onnx for the editor's `onnx` backend.

    .venv/bin/python -m quarry_trainer.tiny_model.train --out media/models/tiny-sql

Needs the project's Python environment (npm run setup:python) and Node (npm ci) for the episodes, which the project's
own `skyrl` protocol writes (scripts/tiny-model/episodes.ts). Everything is seeded.
"""

import argparse
import json
import math
import os
import random
import subprocess
import time

import torch
import torch.nn.functional as F
import transformers
from transformers import DynamicCache

from . import bpe
from .hf import export_onnx, greedy, make_config, new_model

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def render(messages, add_generation_prompt=False):
    """The chat template above, in Python (the tests check that both give the same token ids)."""
    text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


def make_episodes(path):
    node = os.path.join(ROOT, "node_modules", ".bin", "node")
    subprocess.run([node, os.path.join(ROOT, "scripts", "build.mjs")], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    subprocess.run(
        [node, os.path.join(ROOT, "scripts", "tiny-model", "episodes.mjs"), "--out", path], check=True, cwd=ROOT
    )
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def encode_episode(tok, messages):
    """Token ids and a loss mask that is 1 on assistant content and its <|im_end|>."""
    ids, mask = [], []
    for m in messages:
        head = tok.encode(f"<|im_start|>{m['role']}\n")
        body = tok.encode(m["content"] + "<|im_end|>")
        tail = tok.encode("\n")
        learn = 1 if m["role"] == "assistant" else 0
        ids += head + body + tail
        mask += [0] * len(head) + [learn] * len(body) + [0] * len(tail)
    assert ids == tok.encode(render(messages)), "segment-wise encoding differs from whole-text encoding"
    return ids, mask


def _pad(rows, fill):
    width = max(len(r) for r in rows)
    return torch.tensor([r + [fill] * (width - len(r)) for r in rows], dtype=torch.long)


def _step(model, rows, cache, att_prev, starts):
    """Runs one right-padded block of tokens per sequence after what `cache` holds (appending to it); returns the
    logits, the attention mask so far and where each sequence's positions go on. Padding is masked out of every later
    token's attention, and each sequence's positions continue from its own length."""
    inp = _pad(rows, 0)
    width = inp.shape[1]
    att = torch.cat([att_prev, _pad([[1] * len(r) for r in rows], 0)], dim=1)
    pos = torch.tensor([[s + j for j in range(width)] for s in starts])
    logits = model(input_ids=inp, attention_mask=att, position_ids=pos, past_key_values=cache, use_cache=True).logits
    return logits, att, [s + len(r) for s, r in zip(starts, rows)]


def batch_loss(model, seqs):
    """Mean next-token loss over the masked (assistant) tokens of a batch of (ids, mask).

    The prompt is long and mostly the same text, so it is run in parts: the batch's common token prefix (instructions
    and schema up to the question) once for the whole batch, the question with gradients, and the common tail of the
    prompt (the instructions after the question) per sequence but without gradients. The loss and the forward pass
    are exactly those of running each sequence whole; only the gradient through the constant prompt text is left
    out, which cuts a training step several times."""
    starts = [m.index(1) - 1 for _, m in seqs]  # the last prompt token: its logits predict the first answer token
    prompts = [ids[:a] for (ids, _), a in zip(seqs, starts)]
    shortest = min(len(p) for p in prompts)
    shared = 0
    while shared < shortest - 1 and all(p[shared] == prompts[0][shared] for p in prompts):
        shared += 1
    tail = 0
    while tail < shortest - shared - 1 and all(p[-1 - tail] == prompts[0][-1 - tail] for p in prompts):
        tail += 1
    b = len(seqs)
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        prefix = torch.tensor([prompts[0][:shared]])
        model(
            input_ids=prefix,
            attention_mask=torch.ones_like(prefix),
            position_ids=torch.arange(shared).unsqueeze(0),
            past_key_values=cache,
            use_cache=True,
        )
    cache.batch_repeat_interleave(b)
    att = torch.ones(b, shared, dtype=torch.long)
    pos = [shared] * b
    _, att, pos = _step(model, [p[shared : len(p) - tail] for p in prompts], cache, att, pos)
    if tail:
        with torch.no_grad():
            _, att, pos = _step(model, [p[len(p) - tail :] for p in prompts], cache, att, pos)
    answers = [ids[a:] for (ids, _), a in zip(seqs, starts)]
    logits, _, _ = _step(model, answers, cache, att, pos)
    tgt = torch.full(logits.shape[:2], -100, dtype=torch.long)
    for i, ((ids, mask), a) in enumerate(zip(seqs, starts)):
        for j in range(len(ids) - a - 1):
            if mask[a + j + 1]:
                tgt[i, j] = ids[a + j + 1]
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1), ignore_index=-100)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "media", "models", "tiny-sql"))
    ap.add_argument("--episodes", help="use this episodes.jsonl instead of generating one")
    ap.add_argument(
        "--short-steps",
        type=int,
        default=400,
        help="first steps on conversations whose prompt is only the question (cheap; teaches the format and copying)",
    )
    ap.add_argument("--short-batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=200, help="then steps on the full conversations")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--eval-samples", type=int, default=24, help="training conversations to decode greedily as a check")
    ap.add_argument("--merges", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 keeps runs reproducible run to run)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    started = time.time()

    episodes = read_or_make(args)
    prompt_source = sorted({e.get("prompt", "skyrl") for e in episodes})
    texts = [render(e["messages"]) for e in episodes]
    tok = bpe.Tokenizer(bpe.train(texts, args.merges))
    encoded = [encode_episode(tok, e["messages"]) for e in episodes]
    short = [encode_episode(tok, short_messages(e)) for e in episodes]
    lengths = [len(ids) for ids, _ in encoded]
    print(
        f"tokenizer: {len(tok.vocab)} tokens; episodes: {len(encoded)}, "
        f"tokens per episode {min(lengths)}-{max(lengths)}"
        f" ({sum(len(t) for t in texts) / sum(lengths):.2f} chars/token)",
        flush=True,
    )

    eos, pad = tok.token_id("<|im_end|>"), tok.token_id("<|endoftext|>")
    cfg = make_config(len(tok.vocab), eos, pad)
    model = new_model(cfg)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params / 1e6:.2f}M parameters", flush=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.01)
    total_steps = args.short_steps + args.steps
    warmup = max(1, total_steps // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda s: min(1.0, (s + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, s / total_steps)))),
    )

    train_started = time.time()
    order = []
    losses = []
    for step in range(total_steps):
        data, size = (short, args.short_batch) if step < args.short_steps else (encoded, args.batch)
        if step == args.short_steps:
            order = []
        if len(order) < size:
            fresh = list(range(len(data)))
            rng.shuffle(fresh)
            order += fresh
        picked, order = order[:size], order[size:]
        model.train()
        loss = batch_loss(model, [data[i] for i in picked])
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
        if step % 10 == 0 or step == total_steps - 1:
            print(
                f"step {step:4d} loss {loss.item():.4f} lr {sched.get_last_lr()[0]:.2e} "
                f"{time.time() - train_started:6.1f}s",
                flush=True,
            )
    train_seconds = time.time() - train_started

    stop_ids = {tok.token_id("<|im_end|>"), tok.token_id("<|endoftext|>")}
    # Check: does greedy decoding reproduce the first turn of a sample of the training conversations?
    sample = rng.sample(range(len(episodes)), min(args.eval_samples, len(episodes)))
    exact = 0
    for i in sample:
        msgs = episodes[i]["messages"]
        first = next(j for j, m in enumerate(msgs) if m["role"] == "assistant")
        out = greedy(model, tok.encode(render(msgs[:first], True)), 160, stop_ids)
        exact += tok.decode(out).replace("<|im_end|>", "") == msgs[first]["content"]
    print(f"greedy first turn exact on {len(sample)} training conversations: {exact}", flush=True)

    model.save_pretrained(args.out, safe_serialization=True)
    export_onnx(model, os.path.join(args.out, "model.onnx"))
    tok.save(os.path.join(args.out, "tokenizer.json"))
    write_configs(args.out, cfg, tok)
    write_reference(args.out, model, tok, episodes, stop_ids)
    meta = {
        "seed": args.seed,
        "short_steps": args.short_steps,
        "short_batch": args.short_batch,
        "steps": args.steps,
        "batch": args.batch,
        "lr": args.lr,
        "parameters": n_params,
        "train_seconds": round(train_seconds, 1),
        "total_seconds": round(time.time() - started, 1),
        "final_loss": sum(losses[-10:]) / len(losses[-10:]),
        "episodes": len(episodes),
        "prompt": prompt_source,
        "greedy_first_turn_exact": f"{exact}/{len(sample)}",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "threads": args.threads,
    }
    with open(os.path.join(args.out, "training.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps(meta), flush=True)


def short_messages(episode):
    """The conversation with its first prompt cut down to the question: the same answers on a sequence a tenth as
    long, so the first phase of training is cheap."""
    msgs = [dict(m) for m in episode["messages"]]
    msgs[0]["content"] = f"Question: {episode['question']}"
    return msgs


def read_or_make(args):
    if args.episodes:
        with open(args.episodes, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return make_episodes(os.path.join(tmp, "episodes.jsonl"))


def write_configs(out, cfg, tok):
    """generation_config.json and tokenizer_config.json (config.json is save_pretrained's own)."""
    eos = [tok.token_id("<|im_end|>"), tok.token_id("<|endoftext|>")]
    pad = tok.token_id("<|endoftext|>")
    with open(os.path.join(out, "generation_config.json"), "w") as f:
        json.dump(
            {"bos_token_id": None, "eos_token_id": eos, "pad_token_id": pad, "do_sample": False, "max_new_tokens": 256},
            f,
            indent=1,
        )
    added = {
        str(tok.token_id(s)): {
            "content": s,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
        for s in bpe.SPECIAL_TOKENS
    }
    with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
        json.dump(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "added_tokens_decoder": added,
                "bos_token": None,
                "eos_token": "<|im_end|>",
                "pad_token": "<|endoftext|>",
                "model_max_length": cfg.max_position_embeddings,
                "clean_up_tokenization_spaces": False,
                "chat_template": CHAT_TEMPLATE,
            },
            f,
            indent=1,
        )


def write_reference(out, model, tok, episodes, stop_ids):
    """Greedy token ids from PyTorch for a few prompts: first turns, a second turn after an observation, and a
    question the training set does not contain. The ONNX backend's tests must reproduce them token for token."""
    cases = []
    picks = [0, len(episodes) // 3, (2 * len(episodes)) // 3]
    for i in picks:
        msgs = episodes[i]["messages"]
        assistant_turns = [j for j, m in enumerate(msgs) if m["role"] == "assistant"]
        for j in assistant_turns:
            cases.append({"messages": msgs[:j]})
    unseen = dict(episodes[0]["messages"][0])
    unseen["content"] = unseen["content"].replace(episodes[0]["question"], "Which books cost more than 15 dollars?")
    cases.append({"messages": [unseen]})
    for c in cases:
        c["prompt_ids"] = tok.encode(render(c["messages"], True))
        c["max_new_tokens"] = 48
        c["output_ids"] = greedy(model, c["prompt_ids"], c["max_new_tokens"], stop_ids)
        c["output_text"] = tok.decode(c["output_ids"])
    samples = ["SELECT name FROM author WHERE country = 'Poland';", "Wisława Szymborska  \n\n  x\t1958 ✓ <|im_end|>"]
    with open(os.path.join(out, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(
            {
                "stop_ids": sorted(stop_ids),
                "cases": cases,
                "tokenizer": [{"text": s, "ids": tok.encode(s)} for s in samples],
            },
            f,
            ensure_ascii=False,
        )


if __name__ == "__main__":
    main()
