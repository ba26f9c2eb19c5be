"""The pytorch family: PyTorch from Python (torch eager, TorchScript, torch.export, AOTInductor)."""
