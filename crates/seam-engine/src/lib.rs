//! The embedded model: llama.cpp in-process, models from a pinned catalog.
