"""Test doubles (fake servers and models). Nothing here talks to a real model."""
