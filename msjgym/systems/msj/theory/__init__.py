"""The theory of the multiserver-job family only (formulas two or more families use live in :mod:`msjgym.theory`).

==================================================  =================================================================
module                                              what it holds
==================================================  =================================================================
:mod:`~msjgym.systems.msj.theory.open_fcfs`         the exact open FCFS system of small size (a truncated CTMC)
:mod:`~msjgym.systems.msj.theory.zero_queueing`     FCFS stability, queueing-probability bounds, scaling regimes
:mod:`~msjgym.systems.msj.theory.multilevel`        multilevel-scaling asymptotics of the "1 and n" system
:mod:`~msjgym.systems.msj.theory.balanced_splitting`  Balanced Splitting's partition and its helper set's stability
:mod:`~msjgym.systems.msj.theory.server_filling`    ServerFilling's WCFS bounds (Cor. 3.8): generic and exact constants
==================================================  =================================================================
"""
