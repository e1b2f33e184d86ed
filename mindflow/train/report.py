"""``EvaluationReport``: the errors :meth:`OperatorTrainer.evaluate` measures, printable."""

from dataclasses import dataclass

import numpy as np

__all__ = ["EvaluationReport"]


@dataclass
class EvaluationReport:
    """Test errors of a trained operator.

    For trajectories, per predicted frame ``k = t_in, t_in + 1, ...`` (arrays ``[T - t_in]``):
    ``one_step_relative_l2`` / ``one_step_nrmse`` (each frame from the true previous frames)
    and ``rollout_relative_l2`` / ``rollout_nrmse`` (autoregressive from the first ``t_in``
    frames). For steady pairs: ``relative_l2`` and ``nrmse`` (floats); for space-time pairs
    (:class:`~mindflow.train.SpaceTimeSource`: FNO-3D predicting frames ``t_in ...`` at once)
    also ``relative_l2_per_step`` and ``nrmse_per_step`` (``[t_out]``).

    The relative L2 error is ``RelativeRMSELoss`` per sample, ``||pred - true|| / ||true||``
    over space and channels, averaged over the samples; nRMSE is ``datasets.metrics.nrmse``
    (per channel, then averaged).
    """

    n_samples: int
    t_in: int = 0
    one_step_relative_l2: np.ndarray | None = None
    rollout_relative_l2: np.ndarray | None = None
    one_step_nrmse: np.ndarray | None = None
    rollout_nrmse: np.ndarray | None = None
    relative_l2: float | None = None
    nrmse: float | None = None
    relative_l2_per_step: np.ndarray | None = None
    nrmse_per_step: np.ndarray | None = None

    @property
    def unsteady(self):
        return self.rollout_relative_l2 is not None

    def headline(self):
        """The number to watch: the mean rollout relative L2 (steady: the relative L2)."""
        return (
            float(np.mean(self.rollout_relative_l2)) if self.unsteady else float(self.relative_l2)
        )

    def as_dict(self):
        """Plain floats and lists (for logs and JSON)."""
        out = {"n_samples": self.n_samples}
        if self.unsteady:
            out["t_in"] = self.t_in
            for key in (
                "one_step_relative_l2",
                "rollout_relative_l2",
                "one_step_nrmse",
                "rollout_nrmse",
            ):
                values = np.asarray(getattr(self, key), dtype=np.float64)
                out[key] = values.tolist()
                out[key + "_mean"] = float(values.mean())
        else:
            out["relative_l2"] = float(self.relative_l2)
            out["nrmse"] = float(self.nrmse)
            if self.relative_l2_per_step is not None:
                out["relative_l2_per_step"] = np.asarray(self.relative_l2_per_step).tolist()
                out["nrmse_per_step"] = np.asarray(self.nrmse_per_step).tolist()
        return out

    def __str__(self):
        if not self.unsteady:
            text = (
                f"test samples: {self.n_samples}\n"
                f"relative L2: {self.relative_l2:.4e}\nnRMSE: {self.nrmse:.4e}"
            )
            if self.relative_l2_per_step is not None:
                rows = [f"{'frame':>6} {'relative L2':>12} {'nRMSE':>11}"]
                for k, (r, e) in enumerate(
                    zip(self.relative_l2_per_step, self.nrmse_per_step, strict=True)
                ):
                    rows.append(f"{self.t_in + k:>6} {r:>12.4e} {e:>11.4e}")
                text += "\n" + "\n".join(rows)
            return text
        lines = [
            f"test trajectories: {self.n_samples}, input frames: {self.t_in}",
            f"{'frame':>6} {'one-step relative L2':>21} {'rollout relative L2':>20} "
            f"{'one-step nRMSE':>15} {'rollout nRMSE':>14}",
        ]
        for k in range(len(self.rollout_relative_l2)):
            lines.append(
                f"{self.t_in + k:>6} {self.one_step_relative_l2[k]:>21.4e} "
                f"{self.rollout_relative_l2[k]:>20.4e} {self.one_step_nrmse[k]:>15.4e} "
                f"{self.rollout_nrmse[k]:>14.4e}"
            )
        lines.append(
            f"{'mean':>6} {np.mean(self.one_step_relative_l2):>21.4e} "
            f"{np.mean(self.rollout_relative_l2):>20.4e} {np.mean(self.one_step_nrmse):>15.4e} "
            f"{np.mean(self.rollout_nrmse):>14.4e}"
        )
        return "\n".join(lines)
