"""Text to ids: tokenizers, built-in tasks, the facts corpus, a user's files, batching."""
