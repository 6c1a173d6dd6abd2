"""Models, below training and evaluation: presets, where a model comes from, tiny offline models, chat format,
loading and device placement. Both floors load models through here, so neither needs the other."""
