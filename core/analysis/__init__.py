"""What the lab measures on loaded checkpoints: attributions and their faithfulness, accuracy and confusion,
behavioural probes, the treebank's nodes, minimal pairs and the dataset browser."""
