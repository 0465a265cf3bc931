"""Test support for running the REAL vLLM (CPU build) from a separate venv.

* ``env``        -- importable from the main test venv (no torch/vllm needed):
                    locate the vLLM venv, run code in it, build the tiny model.
* ``tiny_model`` -- runs INSIDE the vLLM venv: builds a random tiny Qwen2 model.

See README.md in this folder for the working vLLM-on-CPU recipes.
"""
