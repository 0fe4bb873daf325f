"""assoc-weat: WEAT, WEFAT and ValNorm on static word embeddings (Caliskan et al. 2017; Toney & Caliskan 2021)."""

__version__ = "0.1.0"
