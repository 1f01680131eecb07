"""Test doubles (fake servers and models). Nothing here talks to a real model.

The one fake Mem0 LLM is `fakes.mem0_llm.FakeMem0LLM` (queued, callable, scripted, flaky).
"""
