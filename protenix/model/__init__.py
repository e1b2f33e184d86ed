"""The Protenix network: trunk (Pairformer, MSA module, templates), diffusion, confidence."""
