"""Quarry's tiny text-to-SQL model (media/models/tiny-sql): a byte-level BPE tokenizer learnt on the bundled sample
database's conversations, transformers' own Qwen2ForCausalLM trained on them, the Hugging Face checkpoint layout, and
the ONNX export the editor's `onnx` backend loads.

    .venv/bin/python -m quarry_trainer.tiny_model.train --out media/models/tiny-sql
"""
