"""assoc-sbert-topwords: top words, SEAT cosines and general valence from sentence-transformers embeddings.

Nicolas & Caliskan (2024); May et al. (2019).
"""

__version__ = "0.1.0"
