import torch


def raises():
    raise RuntimeError("checkpoint not found: weights.bin")


def wrong_return():
    return torch.nn.Identity()


def not_a_module():
    return "model", (torch.zeros(1),)


def bad_dtype():
    return torch.nn.Identity(), (torch.zeros(2, dtype=torch.float16),)


not_callable = 3
