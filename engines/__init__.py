"""Optimization runs, without Django: GEPA over the contract's sandboxed case processes.

`engine.run_gepa` wires gepa's core API (`gepa.optimize`) to an adapter whose every
candidate run and metric call happens in the warm sandbox (`adapter`), to the models
through the worker's gateways (`models`), to the run's stops (`stoppers`) and to a sink
that records its progress (`progress`). The web side gives it a sink and the gateways.
"""
