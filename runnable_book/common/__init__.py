"""What the pipeline, the checks, the Sphinx extension and the benchmarks share: small
helpers each of them imports, so that none of them imports another for one function."""
