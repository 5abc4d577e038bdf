"""hostccl for Python: the version, the library's facts, and a thin communicator over NumPy arrays.

    import numpy as np, hostccl
    comm = hostccl.Communicator.from_env()          # RANK/WORLD_SIZE/MASTER_ADDR/... (torchrun, hcclrun)
    x = np.full(4, comm.rank, np.float32)
    comm.all_reduce(x)                              # in place; every rank gets 0 + 1 + ... + (size-1)

Every operation is hostccl's HCCL call on the array's own memory (C-contiguous arrays), run on the
communicator's stream and finished when the method returns. Errors raise hostccl.HcclError with
hostccl's message. ``import hostccl.torch`` registers the torch.distributed backend "hostccl"
(docs/python.md).
"""

from . import _hostccl

__all__ = ["__version__", "info", "get_root_info", "Communicator", "HcclError"]


class HcclError(RuntimeError):
    """A failed hostccl call: ``code`` is the HcclResult (or aclError), the message is hostccl's."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


_hostccl._set_error_class(HcclError)

__version__ = _hostccl.version().split()[-1]
get_root_info = _hostccl.get_root_info
Communicator = _hostccl.Communicator


def info():
    """hccl_info's facts about this library: version, emulated devices, SoC name, build type."""
    facts = dict(_hostccl.facts())
    facts["version"] = __version__
    return facts
