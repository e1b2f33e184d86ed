"""Tests of the protenix package."""
