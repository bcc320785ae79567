Rprec                 	all	0.1591
recip_rank            	all	0.2656
iprec_at_recall_0.15  	all	0.2271
iprec_at_recall_0.33  	all	0.1282
iprec_at_recall_0.50  	all	0.1277
iprec_at_recall_0.66  	all	0.0000
iprec_at_recall_0.95  	all	0.0000
11pt_avg              	all	0.1158
