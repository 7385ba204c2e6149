"""What a training run sends the GUI: plain data, defined Qt-free beside the loop that sends it
(model.train.live_messages) and read here by the panel's widgets."""
from model.train.live_messages import (
                                       COLUMNS,
                                       Failed,
                                       MetricRows,
                                       Offer,
                                       Phase,
                                       ProbeFailed,
                                       RunInfo,
                                       Saved,
                                       SaveFailed,
                                       Snapshot,
)

__all__ = ["COLUMNS", "MetricRows", "RunInfo", "Snapshot", "Offer", "Phase", "Saved", "SaveFailed", "ProbeFailed",
           "Failed"]
