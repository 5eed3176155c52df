"""A tiny randomly initialised BERT and a character WordPiece tokenizer, written to a directory in
the test (nothing downloaded), standing in for the packaged all-MiniLM-L6-v2."""

import string

from .tiny_nli import spread_weights


def build_tiny_bert(directory, *, seed: int = 0, scale: float = 0.3) -> str:
    """A 2-layer, 16-wide BertModel with random weights and a tokenizer whose vocabulary is the
    special tokens, single characters and their ## continuations, saved like a downloaded model."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    chars = list(string.ascii_lowercase + string.digits + string.punctuation)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars)]
    tokenizer = BertTokenizer(vocab={word: i for i, word in enumerate(vocab)}, do_lower_case=True)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=512,
        type_vocab_size=2,
        pad_token_id=0,
    )
    torch.manual_seed(seed)
    model = BertModel(config)
    spread_weights(model, seed, scale)  # large enough that states differ from token to token
    model.save_pretrained(str(directory))
    tokenizer.save_pretrained(str(directory))
    return str(directory)
