"""torch.cuda of the stand-in: a machine without GPUs."""


def is_available():
    return False


def device_count():
    return 0


def _no_gpu(*args, **kwargs):
    raise RuntimeError("Found no NVIDIA driver on your system (the stand-in has no GPUs)")


set_device = get_device_name = synchronize = _no_gpu
