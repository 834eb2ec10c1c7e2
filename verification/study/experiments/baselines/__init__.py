"""The paper's other baselines, re-run under dank-reproduce's protocol.

Modules
-------
logdet     kernel learning with the LogDet divergence (Jain et al. 2012) and an SVM on it
nadaraya   Nadaraya-Watson regression, plain and with a learned metric (MLKR)
cells      the cells ``rf-cv``, ``logdet``, ``nw-cv`` and ``nw-ml`` of dank-reproduce
"""
