"""Byte-level BPE: training, encoding, and writing the result as a Hugging Face tokenizer.json.

Normalization and pre-tokenization are Qwen2's own (NFC, then its Split regex, then the byte-level map), done here by
the `tokenizers` library itself: transformers 5 loads any `qwen2` checkpoint's tokenizer as Qwen2Tokenizer, which
rebuilds the pipeline with exactly these steps, so Python (transformers, raw tokenizers) and JavaScript
(@huggingface/tokenizers) all cut text into the same pieces. Merges are applied by rank, leftmost first, which is what
Hugging Face's BPE model does.
"""

import json
import re
from collections import Counter

from tokenizers import Regex, normalizers, pre_tokenizers

# Qwen2's pre-tokenizer pattern: contractions, letter runs with one leading non-letter (so `_id` stays whole), single
# digits, symbol runs, newlines, and whitespace whose last space starts the next piece.
SPLIT_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
_split = pre_tokenizers.Split(Regex(SPLIT_PATTERN), behavior="isolated")
_nfc = normalizers.NFC()
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def bytes_to_unicode():
    """GPT-2's reversible map from the 256 byte values to printable characters."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {}
    extra = 0
    for b in range(256):
        if b in printable:
            mapping[b] = chr(b)
        else:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


BYTE_MAP = bytes_to_unicode()


def pieces(text):
    """Pre-tokenized pieces of plain text (no special tokens), each as its byte-level string."""
    normalized = _nfc.normalize_str(text)
    return ["".join(BYTE_MAP[b] for b in p.encode("utf-8")) for p, _ in _split.pre_tokenize_str(normalized)]


def train(texts, merges_wanted):
    """Learns `merges_wanted` merges from the texts; ties break on the pair itself so the result is deterministic."""
    words = Counter()
    for t in texts:
        for seg in split_specials(t):
            if seg not in SPECIAL_TOKENS:
                words.update(pieces(seg))
    seqs = {w: list(w) for w in words}
    merges = []
    for _ in range(merges_wanted):
        pairs = Counter()
        for w, n in words.items():
            s = seqs[w]
            for a, b in zip(s, s[1:]):
                pairs[(a, b)] += n
        if not pairs:
            break
        best = max(pairs.items(), key=lambda kv: (kv[1], kv[0]))[0]
        merges.append(best)
        joined = best[0] + best[1]
        for w in words:
            s = seqs[w]
            if len(s) < 2:
                continue
            i, merged = 0, []
            while i < len(s):
                if i + 1 < len(s) and s[i] == best[0] and s[i + 1] == best[1]:
                    merged.append(joined)
                    i += 2
                else:
                    merged.append(s[i])
                    i += 1
            seqs[w] = merged
    return merges


def split_specials(text):
    pattern = "(" + "|".join(re.escape(s) for s in SPECIAL_TOKENS) + ")"
    return [p for p in re.split(pattern, text) if p]


class Tokenizer:
    def __init__(self, merges):
        self.merges = merges
        self.ranks = {pair: i for i, pair in enumerate(merges)}
        vocab = [BYTE_MAP[b] for b in range(256)] + [a + b for a, b in merges]
        self.vocab = {tok: i for i, tok in enumerate(vocab)}
        for s in SPECIAL_TOKENS:
            self.vocab[s] = len(self.vocab)
        self.inverse = {i: t for t, i in self.vocab.items()}
        self.cache = {}

    def token_id(self, token):
        return self.vocab[token]

    def _bpe(self, word):
        if word in self.cache:
            return self.cache[word]
        parts = list(word)
        while len(parts) > 1:
            best, best_rank = None, None
            for i in range(len(parts) - 1):
                r = self.ranks.get((parts[i], parts[i + 1]))
                if r is not None and (best_rank is None or r < best_rank):
                    best, best_rank = i, r
            if best is None:
                break
            parts[best : best + 2] = [parts[best] + parts[best + 1]]
        ids = [self.vocab[p] for p in parts]
        self.cache[word] = ids
        return ids

    def encode(self, text):
        ids = []
        for seg in split_specials(text):
            if seg in SPECIAL_TOKENS:
                ids.append(self.vocab[seg])
            else:
                for p in pieces(seg):
                    ids.extend(self._bpe(p))
        return ids

    def decode(self, ids):
        unbyte = {c: b for b, c in BYTE_MAP.items()}
        out, buf = [], bytearray()
        for i in ids:
            t = self.inverse[i]
            if t in SPECIAL_TOKENS:
                out.append(buf.decode("utf-8", errors="replace"))
                buf = bytearray()
                out.append(t)
            else:
                buf.extend(unbyte[c] for c in t)
        out.append(buf.decode("utf-8", errors="replace"))
        return "".join(out)

    def to_hf_json(self):
        base = len(self.vocab) - len(SPECIAL_TOKENS)
        added = [
            {
                "id": base + i,
                "content": s,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for i, s in enumerate(SPECIAL_TOKENS)
        ]
        model_vocab = {t: i for t, i in self.vocab.items() if t not in SPECIAL_TOKENS}
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": added,
            "normalizer": {"type": "NFC"},
            "pre_tokenizer": {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Split", "pattern": {"Regex": SPLIT_PATTERN}, "behavior": "Isolated", "invert": False},
                    {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
                ],
            },
            "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            "model": {
                "type": "BPE",
                "dropout": None,
                "unk_token": None,
                "continuing_subword_prefix": None,
                "end_of_word_suffix": None,
                "fuse_unk": False,
                "byte_fallback": False,
                "ignore_merges": False,
                "vocab": model_vocab,
                "merges": [[a, b] for a, b in self.merges],
            },
        }

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_hf_json(), f, ensure_ascii=False, indent=1)
