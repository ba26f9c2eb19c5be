"""The real-model corpus: models nobody here wrote, as users hold them (random weights from fixed
seeds, small configs so the whole corpus builds in minutes). `write_hf(folder)` writes the Hugging
Face models (a saved tiny BERT folder, GPT-2 and T5 configs); `MODELS` names each as `--model`
takes it. Used by tests/test_real_models.py and bench/real_models.py (the matrix in
docs/results/real-models.md)."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# the tied matrix (vocab x n_embd) is most of GPT-2's bytes, as in the real one: a form that ships
# it twice shows it in the report's weights ratio
GPT2 = {
    "model_type": "gpt2",
    "architectures": ["GPT2LMHeadModel"],
    "vocab_size": 4096,
    "n_positions": 64,
    "n_embd": 32,
    "n_layer": 2,
    "n_head": 2,
    "tie_word_embeddings": True,
}
T5 = {
    "model_type": "t5",
    "architectures": ["T5Model"],
    "vocab_size": 128,
    "d_model": 32,
    "d_kv": 8,
    "d_ff": 64,
    "num_layers": 2,
    "num_decoder_layers": 2,
    "num_heads": 4,
    "decoder_start_token_id": 0,
}
BERT = {
    "model_type": "bert",
    "architectures": ["BertModel"],
    "vocab_size": 128,
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
}


ORDER = ("resnet18", "mobilenet_v3_small", "timm_test_vit", "bert", "gpt2", "t5", "lstm")


def models(folder: Path) -> dict[str, str]:
    """name -> the model as `--model` spells it (the Hugging Face ones under `folder`)."""
    return {
        "resnet18": "torchvision:resnet18,input_shape=1x3x64x64",
        "mobilenet_v3_small": "torchvision:mobilenet_v3_small,input_shape=1x3x64x64",
        "timm_test_vit": "timm:test_vit",
        "bert": f"hf:{folder / 'tiny_bert'},seq_len=8",
        "gpt2": f"hf-config:{folder / 'gpt2' / 'config.json'},seq_len=8",
        "t5": f"hf-config:{folder / 't5' / 'config.json'},seq_len=8",
        "lstm": f"{HERE / 'models' / 'lstm_tagger.py'}:make",
    }


def write_hf(folder: Path) -> None:
    """The Hugging Face models: tiny BERT saved with save_pretrained (config.json + safetensors,
    what `hf:` loads offline), GPT-2 and T5 as bare configs (what `hf-config:` builds)."""
    for name, config in (("gpt2", GPT2), ("t5", T5)):
        (folder / name).mkdir(parents=True, exist_ok=True)
        (folder / name / "config.json").write_text(json.dumps(config, indent=1))
    bert = folder / "tiny_bert"
    if not (bert / "config.json").is_file():
        import torch
        import transformers

        config = transformers.BertConfig(**{k: v for k, v in BERT.items() if k != "model_type"})
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            transformers.BertModel(config).save_pretrained(bert)
