"""Shared ground for every layer: errors, limits, paths and roots, YAML and log reading, integer parsing, the
judgement of programs (python, CXX). Imports nothing else of aoti_debug."""
