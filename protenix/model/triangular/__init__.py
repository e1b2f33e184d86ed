"""Triangle updates (AF3 Algorithms 12-15) and the OpenFold-style layers they use."""
