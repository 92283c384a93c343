"""Sessions without HTTP: the modes, the memory budget, shared arrays, catalogues, the export."""
