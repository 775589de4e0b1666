"""The repository under git: git plumbing (the only module that runs git) and a pull request's
base side."""
