import this_package_does_not_exist  # noqa: F401
import torch


def make():
    return torch.nn.Identity(), (torch.zeros(1),)
