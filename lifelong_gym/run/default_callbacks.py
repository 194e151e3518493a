"""The runner's own services as callbacks: the progress bar, the probe points, the stop after
failures in a row, the plots.

As transformers' `ProgressCallback` and `EarlyStoppingCallback` are to its `Trainer`:
`Runner` adds them to every run (`default_callbacks`), before the user's, and a user
removes or replaces one with `Runner.remove_callback` / `pop_callback` / `add_callback`.
They work at the run's events (`on_run_begin`, `on_session_recorded`, `on_run_end`) and
read the run's settings there (`progress`, `max_consecutive_failures`, `plots`), so a
setting still turns a service off. They keep no state, and a run's identity (`config.json`)
and saved states leave them out: removing one changes no recorded byte of a run.
"""

from __future__ import annotations

from typing import Any

from tqdm.auto import tqdm

from lifelong_gym.errors import RunAbortedError
from lifelong_gym.results.plots import write_plots
from lifelong_gym.run.callbacks import Callback, RunState
from lifelong_gym.run.probes import Probes


class ProgressCallback(Callback):
    """The progress bar of the stream, with the running success over the judged sessions
    and the errored ones apart (off with the `progress=False` setting)."""

    def __init__(self) -> None:
        self.bar: tqdm | None = None

    def on_run_begin(self, run, state, control, **kwargs):
        """Open the bar at the sessions already done (a resumed run)."""
        self._close()  # a run that raised before its end left its bar open
        self.bar = tqdm(
            total=state.tasks_total,
            initial=min(state.tasks_done, state.tasks_total),
            unit="task",
            disable=not run.settings.progress,
            dynamic_ncols=True,
        )

    def on_session_recorded(self, run, state, control, **kwargs):
        """One more task done."""
        self.bar.update()
        self.bar.set_postfix(success=success_so_far(state), refresh=False)

    def on_run_end(self, run, state, control, **kwargs):
        """Close the bar."""
        self._close()

    def _close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def success_so_far(state: RunState) -> str:
    """The running success over the judged sessions, and the errored ones apart."""
    judged = state.tasks_done - state.errored
    success = f"{state.correct / judged:.1%}" if judged else "-"
    return success + (f" ({state.errored} errored)" if state.errored else "")


class ProbesCallback(Callback):
    """Play the probe set at its points of the stream (`lifelong_gym.run.probes`): point 0
    (or the point a stopped run did not finish) when the run begins, then each point as
    the stream reaches it. `Runner(probes=...)` adds one; the run's probes are its."""

    def __init__(self, probes: Probes):
        self.probes = probes

    def on_run_begin(self, run, state, control, **kwargs):
        """Play the point the run starts at, if it is due."""
        self._play_due(run, state)

    def on_session_recorded(self, run, state, control, **kwargs):
        """Play the point the stream has reached, if it is one."""
        self._play_due(run, state)

    def _play_due(self, run: Any, state: RunState) -> None:
        """Play the point if due; its events leave the state as they found it, so the
        handlers after this one see the stream's event, not a probe's."""
        stream_event = state.current_task, state.probing
        self.probes.play_due(
            run.agent,
            run.callbacks,
            run.history,
            run.settings.max_skipped_interactions,
            run=run,
            state=state,
        )
        state.current_task, state.probing = stream_event


class FailureStopCallback(Callback):
    """Stop the run once `max_consecutive_failures` sessions in a row ended in a failure
    status (`RunState.consecutive_failures`; the setting None never stops). The run's
    files are written and the same command resumes it."""

    def on_session_recorded(self, run, state, control, *, session, **kwargs):
        """Raise `RunAbortedError` when the failures in a row reach the limit."""
        limit = run.settings.max_consecutive_failures
        failures = state.consecutive_failures
        if limit and failures >= limit:
            raise RunAbortedError(
                f"stopped after {failures} sessions in a row failed (last: "
                f"{session.status.value}: {session.error}); fix the cause and run the same "
                "command again to go on, with --retry-errors to play the errored ones again"
            )


class PlotsCallback(Callback):
    """Write the learning-curve PNGs into the run folder at the end (`plots=False`: not)."""

    def on_run_end(self, run, state, control, *, metrics, history, **kwargs):
        """Plot the finished run's metrics, if it has a folder and a session."""
        if run.settings.plots and run.output_dir is not None and history:
            write_plots(metrics, run.output_dir)


RUNNER_CALLBACKS = (ProgressCallback, ProbesCallback, FailureStopCallback, PlotsCallback)


def default_callbacks(probes: Probes | None) -> list[Callback]:
    """The services every run has, in the order they act at each run event."""
    probing = [ProbesCallback(probes)] if probes is not None else []
    return [ProgressCallback(), *probing, FailureStopCallback(), PlotsCallback()]


def of_the_user(callbacks: list[Callback]) -> list[Callback]:
    """The callbacks that are not the runner's own (a subclass of one is the user's): they
    make the run's identity and saved states."""
    return [callback for callback in callbacks if type(callback) not in RUNNER_CALLBACKS]
