//! Platform services: bootstrap, shared segments, CMA, waiting, configuration.
