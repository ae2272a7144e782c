"""Pipeline wiring and the ``screenmill`` command line."""
