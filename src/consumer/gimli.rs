//! The gimli adapter: gimli 0.34 judged against the reference.
