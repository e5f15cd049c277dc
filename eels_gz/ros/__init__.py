"""ROS 2 I/O: message construction and CDR encoding (rosbags' ROS 2 type
store), MCAP logging; rclpy or DDS transports come with the ROS interface."""
