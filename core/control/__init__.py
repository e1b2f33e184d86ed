"""Control flow under every transformation: ``cond``, ``scan``, ``fori_loop``, ``while_loop``
(``api``, exported by ``core.ops`` too) and the staged-loop engine (``loops``)."""
