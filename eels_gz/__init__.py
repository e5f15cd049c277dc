"""eels_gz: screw-propelled snake robots and steerable rovers in Gazebo and in
an embedded DART host that runs the same gz-sim Python systems."""

__version__ = "0.1.0"
