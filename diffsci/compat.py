"""``import diffsci.compat``: unchanged MindSpore, MindFlow, MindElec and Protenix scripts.

Put it first in the script; after it ``import mindspore as ms`` is ``diffsci.core``,
``mindspore.dataset`` is ``diffsci.datasets``, and ``mindflow``, ``mindelec``, ``protenix`` are
diffsci's packages of those names (see ``diffsci.aliases``). It raises ImportError naming the
distribution when a real package of one of those names is installed, rather than shadow it.
"""

from diffsci.aliases import install as _install

_install()
